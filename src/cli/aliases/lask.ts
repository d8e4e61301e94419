#!/usr/bin/env node
// `lask QUESTION`: seed 000's alias for `switchboard ask lask`'s agent (ask-commands.ts ASK_ALIASES).
import { askAliasMain } from '../ask-alias.js';

process.exitCode = await askAliasMain('lask', process.argv.slice(2));
