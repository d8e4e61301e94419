#!/usr/bin/env node
// `cask QUESTION`: seed 000's alias for `switchboard ask cask`'s agent (ask-commands.ts ASK_ALIASES).
import { askAliasMain } from '../ask-alias.js';

process.exitCode = await askAliasMain('cask', process.argv.slice(2));
