// Child tasks (ctx.callTool) as both stores keep them: the bound on the children shown with a task.

/** At most this many children are shown with a task (its first ones): TaskFamily.children. */
export const MAX_FAMILY_CHILDREN = 100;
