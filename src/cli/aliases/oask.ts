#!/usr/bin/env node
// `oask QUESTION`: seed 000's alias for `switchboard ask oask`'s agent (ask-commands.ts ASK_ALIASES).
import { askAliasMain } from '../ask-alias.js';

process.exitCode = await askAliasMain('oask', process.argv.slice(2));
