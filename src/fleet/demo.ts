/**
 * The fleet's demo key: made once by the fleet before its replicas start (never by each), in the
 * shared ledger, and kept beside the fleet's data so that a later start prints it again. A saved
 * key the ledger no longer accepts (another database, or revoked) is replaced by a new demo.
 */
import { mkdirSync } from 'node:fs';
import type { LedgerEngine } from '../ledger/engine.ts';
import { DEMO_CREDITS, DEMO_EMAIL, DEMO_WORKSPACE_NAME, demoKeyPath, readDemoKey, writeDemoKey } from '../ledger/demo.ts';

export interface FleetDemo {
  key: string;
  workspaceId: string;
  /** Made by this start (with DEMO_CREDITS credits). */
  created: boolean;
  /** Where the key is kept. */
  keyFile: string;
}

export async function ensureFleetDemo(ledger: LedgerEngine, dir: string): Promise<FleetDemo> {
  const saved = readDemoKey(dir);
  if (saved !== null) {
    const auth = await ledger.authenticate(saved);
    if (auth.ok) return { key: saved, workspaceId: auth.workspaceId, created: false, keyFile: demoKeyPath(dir) };
  }
  const { workspaceId } = await ledger.createWorkspace(DEMO_WORKSPACE_NAME, { createdBy: DEMO_EMAIL });
  await ledger.grantCredits(workspaceId, DEMO_CREDITS, { kind: 'bought', note: 'demo' });
  const { key } = await ledger.createKey(workspaceId, DEMO_EMAIL, { name: 'demo' });
  mkdirSync(dir, { recursive: true });
  writeDemoKey(dir, key);
  return { key, workspaceId, created: true, keyFile: demoKeyPath(dir) };
}
