/** The bridge end to end over HTTP (test/e2e/bridge-http-suite.ts) with the run ledger in SQLite. */
import { bridgeHttpSuite } from './bridge-http-suite.js';

bridgeHttpSuite('sqlite');
