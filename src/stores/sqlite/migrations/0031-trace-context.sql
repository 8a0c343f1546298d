-- trace_parent, trace_state: the W3C trace context a task's runs join (NewTask.trace, tasks/trace-context.ts): the
-- span of the creating tools/call, or the caller's `_meta` traceparent and tracestate, checked before they are kept.
-- Each run's span is a child of it, on whichever process claims the task. Nullable columns without a default (no
-- table rewrite; older processes never set them), bounded as the W3C format bounds them.
ALTER TABLE tasks ADD COLUMN trace_parent TEXT CHECK (length(trace_parent) = 55);
ALTER TABLE tasks ADD COLUMN trace_state TEXT CHECK (length(trace_state) <= 512);
