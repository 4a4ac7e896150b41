/**
 * The loops' Brewfather streams as the node runs them: each stream's URL read once from its id
 * file at start (a file that cannot be read is logged, and that stream posts nothing), each
 * post made of the loop's latest status and its fresh recorded values.
 */
import type { Logger } from 'pino';
import { type BrewfatherBody, brewfatherBody, brewfatherUrl } from '../alerts/brewfather.js';
import { BrewfatherStreams, type StreamSpec } from '../alerts/brewfather-streams.js';
import type { Config } from '../config/schema.js';
import type { Daemon } from '../daemon/daemon.js';
import type { Clock } from '../time/clock.js';

/** The streams of the loops that have a `brewfather` block; undefined when none has. */
export function buildBrewfatherStreams(
  config: Config,
  daemon: Pick<Daemon, 'statuses' | 'recordedValues'>,
  clock: Pick<Clock, 'setTimer' | 'clearTimer'>,
  logger: Logger,
): BrewfatherStreams | undefined {
  const specs: StreamSpec[] = [];
  for (const [loop, section] of Object.entries(config.loops)) {
    if (!section.brewfather) continue;
    let url: string | undefined;
    try {
      url = brewfatherUrl(loop, section.brewfather);
    } catch (error) {
      logger.error(
        `brewfather: ${error instanceof Error ? error.message : String(error)}; ${loop} posts nothing`,
      );
    }
    specs.push({ loop, config: section.brewfather, url });
  }
  if (specs.length === 0) return undefined;
  return new BrewfatherStreams({
    streams: specs,
    clock,
    sample: (loop) => sampleOf(config, daemon, loop),
    logger,
  });
}

function sampleOf(
  config: Config,
  daemon: Pick<Daemon, 'statuses' | 'recordedValues'>,
  loop: string,
): BrewfatherBody | undefined {
  const section = config.loops[loop];
  const status = daemon.statuses().find((s) => s.loop === loop);
  if (!section?.brewfather || !status) return undefined;
  const recorded = daemon.recordedValues.current().filter((value) => value.loop === loop);
  const faulted = status.conditions.find((c) => c.type === 'Faulted');
  return brewfatherBody(section.brewfather, {
    loop,
    unit: section.unit ?? '°C',
    setpoint: status.setpoint,
    action: status.action,
    measured: status.measured,
    fault: faulted?.status === 'True' ? faulted.message : undefined,
    recorded: (sensor) => recorded.find((value) => value.sensor === sensor)?.value,
  });
}
