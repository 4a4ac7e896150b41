/** The shapes of a Home Assistant device-discovery message (see discovery.ts for the facts relied on). */

/** Home Assistant entity platforms homeostat publishes. */
export type Platform = 'climate' | 'humidifier' | 'sensor' | 'binary_sensor' | 'button' | 'number' | 'select';

/** One entry of `cmps`: a platform and its (abbreviated) options. */
export type DiscoveryComponent = { p: Platform } & Record<string, unknown>;

export interface DiscoveryPayload {
  dev: { ids: string[]; name: string; mf: string; mdl: string; sw: string };
  o: { name: string; sw: string; url?: string };
  /** Shared availability: every entity goes unavailable with the node's last will. */
  avty_t: string;
  /**
   * Root QoS, kept for HA versions that apply it; HA up to 2026.5 does not pass it on to the
   * components, which carry their own (discovery-components.ts).
   */
  qos: 1;
  cmps: Record<string, DiscoveryComponent>;
}

export interface DiscoveryMessage {
  topic: string;
  payload: DiscoveryPayload;
}

export interface DiscoveryOptions {
  /** Discovery prefix (mqtt.discovery.prefix). Default in the config: homeassistant. */
  prefix: string;
  /** mqtt.baseTopic. */
  baseTopic: string;
  /** homeostat's version (device and origin sw). */
  version: string;
  /** Where users get help (origin support_url). Default: none. */
  supportUrl?: string;
}
