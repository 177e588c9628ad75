-- Keyset paging (docs/api.md, "Paging"): every sort GET /orders accepts is read from an index in
-- its order, so page 1 and a page after or before a cursor read only the rows they show (checked
-- on PostgreSQL's plans by test/db/order-page-plans.test.ts). The indexes of 0001 serve every sort
-- but one: status, whose tie-breaker is id. (status, created_at, id) orders a status's rows by
-- created_at, so sorting them by id meant reading and sorting all of them. Under a status filter
-- the status key is dropped from the sort (orders.rules effectiveOrderSort), and this index serves
-- sort=id there too.
CREATE INDEX orders_status_id_idx ON orders (status, id) WHERE deleted_at IS NULL;
