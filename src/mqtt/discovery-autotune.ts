/** A PID loop's autotune components. Pure: no clock, no IO. */
import type { KeyedComponent, LoopContext } from './discovery-entity.js';
import { STATE_TEMPLATES } from './discovery-templates.js';

/**
 * The relay autotune from Home Assistant: a button that starts it with the loop's defaults
 * (`start`; a two-sided mode needs the side, so there the press is refused with why, on
 * `<loop>/result`), one that cancels it, one that accepts the newest stored tuning (`latest`),
 * and a sensor with the phase (`idle` before any run) and the whole run as attributes.
 */
export function autotuneComponents({ loopId, topics, state, entity, name }: LoopContext): KeyedComponent[] {
  const button = (key: string, short: string, topic: string, payload: string): KeyedComponent => [
    key,
    {
      ...entity('button', key, name(short), key),
      cmd_t: topic,
      pl_prs: payload,
      ent_cat: 'config',
      ret: false,
    },
  ];
  return [
    button('autotune', 'autotune', topics.loopCommand(loopId, 'autotune'), 'start'),
    button('autotune_cancel', 'cancel autotune', topics.loopCommand(loopId, 'autotune'), 'cancel'),
    button('tuning_accept', 'accept tuning', topics.loopCommand(loopId, 'tuning'), 'latest'),
    [
      'autotune_status',
      {
        ...entity('sensor', 'autotune_status', name('autotune status'), 'autotune_status'),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.autotunePhase,
        json_attr_t: state,
        json_attr_tpl: STATE_TEMPLATES.autotuneAttributes,
        ent_cat: 'diagnostic',
      },
    ],
  ];
}
