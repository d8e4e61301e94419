import type { MethodName, Params, Result } from '../protocol/methods.js';
import type { OperationContext } from './context.js';

/** Implements one method; may throw SwitchboardError. */
export type Handler<M extends MethodName> = (ctx: OperationContext, params: Params<M>) => Result<M> | Promise<Result<M>>;

/** One handler per method. */
export type HandlerTable = { [M in MethodName]: Handler<M> };
