/** Ports for the throwaway servers tests start: the fleet's own probe. */
export { freeLoopbackPort as freePort } from '../../src/fleet/ports.ts';
