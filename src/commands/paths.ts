/** Config path from the flag, systemd's ConfigurationDirectory, or /etc. */
export function defaultConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.CONFIGURATION_DIRECTORY?.split(':')[0];
  return dir ? `${dir}/config.yaml` : '/etc/homeostat/config.yaml';
}

/** Database path from systemd's StateDirectory, or ./var. */
export function defaultDbPath(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.STATE_DIRECTORY?.split(':')[0];
  return dir ? `${dir}/homeostat.db` : './var/homeostat.db';
}
