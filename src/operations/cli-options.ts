import type { CliOption, Transport } from './operation.js';

/** The options many commands share, written once. */

export const CONFIG_OPTION: CliOption = {
  name: 'config',
  value: 'FILE',
  description: 'the config (default $CONFIGURATION_DIRECTORY/config.yaml, else /etc/homeostat/config.yaml)',
};

export const DB_OPTION: CliOption = {
  name: 'db',
  value: 'FILE',
  description:
    "the database, read directly (default: the config's storage.path, else $STATE_DIRECTORY/homeostat.db, else ./var/homeostat.db)",
};

export const API_OPTION: CliOption = {
  name: 'api-url',
  value: 'URL',
  description: "the daemon's API (default: the config's http block, else http://127.0.0.1:8734)",
};

export const BROKER_FALLBACK_OPTION: CliOption = {
  name: 'mqtt-url',
  value: 'URL',
  description: "the broker, when the daemon's API does not answer",
};

export const SYSFS_OPTION: CliOption = {
  name: 'sysfs-root',
  value: 'DIR',
  description: 'where sysfs is (default /sys)',
};

/** What each transport adds after a command's own options. */
export const TRANSPORT_OPTIONS: Record<Transport, readonly CliOption[]> = {
  local: [],
  api: [CONFIG_OPTION, API_OPTION],
  'api-or-db': [CONFIG_OPTION, API_OPTION, DB_OPTION],
  'api-or-mqtt': [CONFIG_OPTION, API_OPTION, BROKER_FALLBACK_OPTION],
};

/** How each transport reaches the node, in a sentence (the help and the reference pages). */
export const TRANSPORT_NOTES: Record<Transport, string> = {
  local: '',
  api: "asks the running daemon's HTTP API",
  'api-or-db':
    "asks the running daemon's HTTP API; when none answers, reads the database (read-only) and says so on stderr",
  'api-or-mqtt':
    "sends it to the daemon's HTTP API; when none answers, checks the loop against the config and sends it through the broker",
};
