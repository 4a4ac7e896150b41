import { alertTestRequest, alertTestResponse } from './alert-schemas.js';
import { writeResult } from './client-schemas.js';
import type { Operation } from './operation.js';
import {
  autotuneRequest,
  commandResult,
  presetRequest,
  profileRequest,
  sessionRequest,
  setRequest,
  tuningRequest,
} from './write-schemas.js';

/**
 * What changes a loop. Every write's body goes, as bytes, to the parser of the matching MQTT
 * command (the same rules, stored before the answer, source `http`); refusals are answers too
 * (`accepted: false`), which the CLI reads with `writeResult`.
 */
export const WRITE_OPERATIONS = {
  setLoop: {
    summary: 'Change the setpoint and/or mode (the rules of the MQTT set command; stored before the answer)',
    http: {
      method: 'POST',
      path: '/api/loops/:loop',
      write: true,
      command: 'json',
      request: setRequest,
      response: commandResult,
    },
    mqtt: [
      {
        suffix: 'setpoint/set',
        kind: 'setpoint',
        payload:
          "a plain decimal number (`21.5`), exactly: no spaces or line end around it, no leading zeros, no exponent, at most 3 decimal places (more if the loop's `step` has more); outside the loop's limits it is rejected, never clamped",
      },
      {
        suffix: 'mode/set',
        kind: 'mode',
        payload: 'a mode the loop allows (`off`, `heat`, …)',
      },
      {
        suffix: 'set',
        kind: 'json',
        payload:
          'JSON `{"setpoint"?, "mode"?, "requestId"?}`, or `{"preset": "eco"|null, "requestId"?}` alone (a preset brings its own setpoint and mode: with a setpoint or mode as well it is refused)',
      },
    ],
    cli: {
      command: 'set',
      summary: "changes a loop's setpoint or mode through the daemon and prints its answer",
      args: 'LOOP',
      positional: 'loop',
      transport: 'api-or-mqtt',
      options: [
        { name: 'setpoint', value: 'X', description: "the new setpoint (within the loop's limits)" },
        {
          name: 'mode',
          value: 'M',
          description:
            'the new mode (off, heat, cool, heat_cool, humidify, dehumidify, auto: as the loop allows)',
        },
      ],
      example: 'homeostat set room --setpoint 21.5',
    },
  },
  resetFault: {
    summary: 'Reset a latched fault (empty body or {})',
    http: {
      method: 'POST',
      path: '/api/loops/:loop/fault-reset',
      write: true,
      command: 'faultReset',
      response: commandResult,
    },
    mqtt: [
      {
        suffix: 'fault/reset',
        kind: 'faultReset',
        payload:
          'empty or `reset`: clears a fault latched before the reset arrived (see `effectWatch` and the safety monitors); stored as desired state with the next generation before it is answered (see [Reliability](reliability.md#commands-mean-what-they-meant-when-sent))',
      },
    ],
  },
  autotune: {
    summary:
      'Start ({} or {"action":"start",…}) or cancel ({"action":"cancel"}) the relay autotune (the rules of MQTT autotune/set; stored before the answer)',
    http: {
      method: 'POST',
      path: '/api/loops/:loop/autotune',
      write: true,
      command: 'autotune',
      request: autotuneRequest,
      response: commandResult,
      client: writeResult,
    },
    mqtt: [
      {
        suffix: 'autotune/set',
        kind: 'autotune',
        payload:
          '`start`: start the relay autotune ([Tuning](tuning.md#tuning)) with the loop\'s `autotune` settings; `cancel`; or JSON `{"action"?: "start"|"cancel", "side"?: "raise"|"lower", "closedLoopS"?, "maxDurationS"?, "requestId"?}`. Refused with the reason on a hysteresis loop, with the mode off, without a side in `heat_cool`/`auto`, for a side the loop has no actuator for, and for durations that are not seconds above 0 (`closedLoopS` at most 1 day, `maxDurationS` at most 7 days). A cancel with no run requested is accepted and changes nothing; an empty payload (how a retained message is cleared) is refused, never a start',
      },
    ],
    cli: {
      command: 'autotune',
      summary:
        "tunes a PID loop's gains in the running daemon: switches its heater (cooler…) on and off around the setpoint, fits a model, proposes gains; follows the run (Ctrl-C stops watching, not the run)",
      args: 'LOOP',
      positional: 'loop',
      transport: 'api',
      options: [
        {
          name: 'side',
          value: 'raise|lower',
          description: 'raise (the heater, humidifier) or lower (the cooler…): needed in heat_cool and auto',
        },
        {
          name: 'closed-loop',
          value: '60s',
          description:
            'the closed-loop time constant the gains aim at (SIMC τc; default the identified dead time)',
        },
        {
          name: 'max-duration',
          value: '6h',
          description: "the run's time limit (default the loop's autotune.maxDurationS, else 48h)",
        },
        {
          name: 'no-wait',
          description: 'return once the daemon accepted the request (progress in homeostat status)',
        },
        { name: 'cancel', description: 'stop the running autotune of LOOP' },
      ],
      example: 'homeostat autotune room --max-duration 12h',
      uses: ['loop'],
    },
  },
  applyTuning: {
    summary:
      'Put a stored tuning in force: a version, "latest" (accept the newest) or "config" (the file’s gains); the answer says whether it changed',
    http: {
      method: 'POST',
      path: '/api/loops/:loop/tuning',
      write: true,
      command: 'tuning',
      request: tuningRequest,
      response: commandResult,
      client: writeResult,
    },
    mqtt: [
      {
        suffix: 'tuning/set',
        kind: 'tuning',
        payload:
          '`latest` (accept the newest stored tuning), a version number (`3`: restore it), `config` (back to the config file\'s gains), or JSON `{"version": 3|"latest"|"config", "requestId"?}`. An unknown version is refused; the tuning already in force is accepted and changes nothing',
      },
    ],
    cli: {
      command: 'tuning',
      summary:
        "puts a stored tuning in force through the daemon: VERSION (restore), latest (accept the newest), config (the file's gains)",
      args: 'LOOP VERSION|latest|config',
      positional: 'loop-value',
      transport: 'api',
      options: [],
      example: 'homeostat tuning room latest',
    },
  },
  selectPreset: {
    summary:
      'Select one of the loop’s presets ({"preset":"eco"}), or none ({"preset":null}) (the rules of MQTT preset/set; stored before the answer); the answer says whether it changed',
    http: {
      method: 'POST',
      path: '/api/loops/:loop/preset',
      write: true,
      command: 'preset',
      request: presetRequest,
      response: commandResult,
      client: writeResult,
    },
    mqtt: [
      {
        suffix: 'preset/set',
        kind: 'preset',
        payload:
          'a preset name of the loop (`eco`), `none` (no preset: the setpoint stays where the preset left it), or JSON `{"preset": "eco"|null, "requestId"?}`. Refused with the reason for a loop without presets, an unknown name (the known ones are listed), and an empty payload (how a retained message is cleared, never a selection). Selecting the preset already in force is accepted and changes nothing',
      },
    ],
    cli: {
      command: 'preset',
      summary:
        "selects one of the loop's presets (loops.<id>.presets) through the daemon, or none (the setpoint stays)",
      args: 'LOOP NAME|none',
      positional: 'loop-value',
      transport: 'api',
      options: [],
      example: 'homeostat preset living eco',
    },
  },
  commandProfile: {
    summary:
      'Start ({"action":"start","name":"ale"}), pause, resume or stop the loop’s profile (the rules of MQTT profile/set; stored before the answer); the answer says whether it changed',
    http: {
      method: 'POST',
      path: '/api/loops/:loop/profile',
      write: true,
      command: 'profile',
      request: profileRequest,
      response: commandResult,
      client: writeResult,
    },
    mqtt: [
      {
        suffix: 'profile/set',
        kind: 'profile',
        payload:
          '`start NAME`, `pause`, `resume`, `stop`, or JSON `{"action": "start"|"pause"|"resume"|"stop", "name"?, "requestId"?}` (a start needs the name, the others take none). Refused for a loop without profiles, an unknown profile and anything else. Starting the profile already started, pausing with none running (or already paused), resuming with none paused, stopping with none started: accepted, nothing changes',
      },
    ],
    cli: {
      command: 'profile',
      summary:
        "starts one of the loop's profiles (loops.<id>.profiles) through the daemon, or pauses, resumes or stops it",
      args: 'LOOP start NAME|pause|resume|stop',
      positional: 'loop-action',
      transport: 'api',
      options: [],
      example: 'homeostat profile fermenter start ale',
    },
  },
  testAlerts: {
    summary:
      'Send a test alert through each alert channel (or the one named) at once, not through the outbox, and answer what each said',
    http: {
      method: 'POST',
      path: '/api/alerts/test',
      write: true,
      request: alertTestRequest,
      response: alertTestResponse,
    },
    cli: {
      command: 'alert',
      summary:
        'sends a test alert through every channel of alerts.channels (and MQTT), or the one named, and prints what each answered',
      args: 'test [CHANNEL]',
      positional: 'action-value',
      transport: 'api',
      options: [],
      example: 'homeostat alert test phone',
    },
  },
  login: {
    summary: 'Log the dashboard in with the API token (sets an HttpOnly cookie; 204)',
    http: {
      method: 'POST',
      path: '/api/session',
      write: true,
      open: true,
      request: sessionRequest,
      status: 204,
    },
  },
  logout: {
    summary: 'Log the dashboard out (204)',
    http: { method: 'DELETE', path: '/api/session', write: false, open: true, status: 204 },
  },
} satisfies Record<string, Operation>;
