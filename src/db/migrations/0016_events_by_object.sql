-- GET /events?objectType=…&objectId=…: one resource's history (an order's, a payment's), newest
-- first like every page of events, read from this index however long the log is. The id is the
-- stored record's (every event object has one), compared as text.
CREATE INDEX events_object_idx ON events (object_type, (object ->> 'id'), created_at DESC, seq DESC);
