/**
 * The bridge end to end over HTTP (test/e2e/bridge-http-suite.ts) with the run ledger in
 * PostgreSQL, on a real server this file starts and stops: a file of its own, not a second pass in
 * bridge-http.test.ts, so the two ledgers' runs go side by side in the line.
 */
import { bridgeHttpSuite } from './bridge-http-suite.js';

bridgeHttpSuite('postgres');
