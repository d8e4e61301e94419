/**
 * The ask contract (seed 000: an agent asks an agent), written once for the engine and every
 * surface (JSON-RPC, HTTP and its OpenAPI document, MCP): the shape of an ask's id and the limits
 * a caller is held to.
 */

/** An ask's id: ten lowercase hex digits, short enough to type, 40 bits so concurrent asks never collide. */
export const ASK_ID_SOURCE = '^[0-9a-f]{10}$';
export const ASK_ID_WORDS = 'an ask_id is ten hex digits';
/** From an ask's creation to its reply, queue time included, unless the caller says otherwise. */
export const DEFAULT_ASK_TIMEOUT_MS = 10 * 60_000;
/** The longest timeout a caller may ask for (two hours). */
export const MAX_ASK_TIMEOUT_MS = 2 * 60 * 60_000;
/** Asks waiting in one target's line at most (the active one included). */
export const MAX_ASKS_PER_TARGET = 32;
/** The longest question, in characters. */
export const MAX_QUESTION_CHARS = 100_000;
