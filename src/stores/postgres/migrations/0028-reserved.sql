-- Migration 28 is reserved for a change made alongside this one; this file holds its place until that change lands
-- (it does nothing).
SELECT 1;
