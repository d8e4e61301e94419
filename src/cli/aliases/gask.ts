#!/usr/bin/env node
// `gask QUESTION`: seed 000's alias for `switchboard ask gask`'s agent (ask-commands.ts ASK_ALIASES).
import { askAliasMain } from '../ask-alias.js';

process.exitCode = await askAliasMain('gask', process.argv.slice(2));
