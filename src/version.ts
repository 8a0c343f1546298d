// The package version, reported as serverInfo.version.
export const VERSION = '0.1.0';
