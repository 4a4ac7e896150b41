/** The profile components of a loop with profiles. Pure: no clock, no IO. */
import { type KeyedComponent, type LoopContext, profileNames } from './discovery-entity.js';
import { STATE_TEMPLATES } from './discovery-templates.js';

/**
 * A loop's profiles from Home Assistant: a select that starts one (`start NAME` on
 * `<loop>/profile/set`; it shows the started profile, unknown when none), buttons that pause,
 * resume and stop it, and a sensor with its state (`idle` when none is started) and its progress
 * (step, time left) as attributes.
 */
export function profileComponents({
  loopId,
  loop,
  topics,
  state,
  entity,
  name,
}: LoopContext): KeyedComponent[] {
  const topic = topics.loopCommand(loopId, 'profile');
  const button = (action: 'pause' | 'resume' | 'stop'): KeyedComponent => {
    const key = `profile_${action}`;
    return [
      key,
      {
        ...entity('button', key, name(`${action} profile`), key),
        cmd_t: topic,
        pl_prs: action,
        ret: false,
      },
    ];
  };
  return [
    [
      'profile',
      {
        ...entity('select', 'profile', name('profile'), 'profile'),
        cmd_t: topic,
        // HA sends the option picked; the command is `start NAME`.
        cmd_tpl: 'start {{ value }}',
        stat_t: state,
        val_tpl: STATE_TEMPLATES.profileName,
        ops: profileNames(loop),
        ret: false,
      },
    ],
    button('pause'),
    button('resume'),
    button('stop'),
    [
      'profile_status',
      {
        ...entity('sensor', 'profile_status', name('profile status'), 'profile_status'),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.profileState,
        json_attr_t: state,
        json_attr_tpl: STATE_TEMPLATES.profileAttributes,
      },
    ],
  ];
}
