-- trace_parent, trace_state: the W3C trace context a task's runs join (NewTask.trace, tasks/trace-context.ts): the
-- span of the creating tools/call, or the caller's `_meta` traceparent and tracestate, checked before they are kept.
-- Each run's span is a child of it, on whichever replica claims the task. Nullable columns without a default (no
-- table rewrite; older replicas never set them), bounded as the W3C format bounds them.
ALTER TABLE :schema.tasks ADD COLUMN trace_parent text CHECK (length(trace_parent) = 55);
ALTER TABLE :schema.tasks ADD COLUMN trace_state text CHECK (length(trace_state) <= 512);
