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
      request: setRequest,
      response: commandResult,
    },
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
    http: { method: 'POST', path: '/api/loops/:loop/fault-reset', write: true, response: commandResult },
  },
  autotune: {
    summary:
      'Start ({} or {"action":"start",…}) or cancel ({"action":"cancel"}) the relay autotune (the rules of MQTT autotune/set; stored before the answer)',
    http: {
      method: 'POST',
      path: '/api/loops/:loop/autotune',
      write: true,
      request: autotuneRequest,
      response: commandResult,
      client: writeResult,
    },
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
      request: tuningRequest,
      response: commandResult,
      client: writeResult,
    },
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
      request: presetRequest,
      response: commandResult,
      client: writeResult,
    },
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
      request: profileRequest,
      response: commandResult,
      client: writeResult,
    },
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
