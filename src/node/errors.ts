/** The errors a node is refused with at construction; `homeostat run` tells them apart. */

/** A node that cannot be built as configured (the message says what to fix). */
export class NodeSetupError extends Error {}

/**
 * Another daemon runs on the same database (the message names it: pid, host, since when, node
 * id). `homeostat run` exits with DATABASE_IN_USE_EXIT_CODE.
 */
export class DatabaseInUseError extends NodeSetupError {}
