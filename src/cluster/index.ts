export { parseNatsOptions, isLoopbackHost, type NatsFlags, type NatsOptions, type NatsAuth, type NatsTls } from './nats-options.js';
export { connectCluster, type ClusterConnection, type ClusterConnectOptions } from './connection.js';
export {
  ensureTopology,
  ensurePool,
  poolConsumer,
  nodePermissions,
  nodeInboxPrefix,
  checkName,
  workSubject,
  eventSubject,
  nodeControlSubject,
  nodePanesSubject,
  paneOutputSubject,
  paneCreatedSubject,
  PANE_CREATED_ANY_NODE,
  paneExitedSubject,
  PANE_EXITED_ANY_NODE,
  paneStateSubject,
  PANE_STATE_ANY_NODE,
  controllerSubject,
  WORK_STREAM,
  EVENTS_STREAM,
  EVENTS_MAX_AGE_MS,
  cancelKey,
  NODES_BUCKET,
  CLAIMS_BUCKET,
  STALE_WORK_ITEM_MS,
  DEFAULT_NODE_TTL_MS,
  type PoolSpec,
  type TopologyOptions,
  type NatsUserPermissions,
} from './topology.js';
export { NodeRecordSchema, type NodeRecord, type NodeDescription } from './node-record.js';
export type { LeaseState } from './lease-state.js';
export { NodeLease, type LeaseChange, type NodeLeaseOptions } from './node-lease.js';
export { NodeDirectory, type LiveNode, type DirectoryEvent, type NodeRequirements, type NodeDirectoryOptions } from './node-directory.js';
export { RunClaims, CLAIM_BUDGET_MS, type RunClaim, type ClaimOutcome, type MarkedStop } from './run-claims.js';
export { WorkDispatcher, type WorkItem, type Dispatched, type ConsumerPosition } from './work-queue.js';
export { ConversationShelf, MAX_SHELVED_BYTES, type ShelvedConversation } from './conversation-shelf.js';
export { WorkPuller, type WorkEvent, type WorkSlots, type WorkPullerOptions } from './work-puller.js';
export { isWrongLastSequence } from './nats-errors.js';
export { EventPublisher, eventMessageId, lastEventSeq, parseRunEvent, NODE_HEADER, type RunEventMessage, type PublishedEvent, type EventPublisherOptions } from './event-stream.js';
export { EventIntake, type EventSink, type DeliveredEvent, type EventHole, type EventIntakeOptions } from './event-intake.js';
export {
  ControlClient,
  nodeControlClient,
  controllerControlClient,
  serveNodeControl,
  serveControllerControl,
  serveControl,
  parseJson,
  maxPayload,
  NODE_CONTROL_OPS,
  CONTROLLER_CONTROL_OPS,
  type ControlOp,
  type ControlOps,
  type ControlHandlers,
  type ServeOptions,
} from './control.js';
export { subscribeToNodes } from './reflected.js';
