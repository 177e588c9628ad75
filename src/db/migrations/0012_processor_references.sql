-- A processor's event names its charge or refund by the processor's own id
-- (POST /processors/{name}/events, docs/payments.md "Processor events"): found by it.
CREATE INDEX payments_processor_reference_idx ON payments (processor, processor_reference) WHERE processor_reference IS NOT NULL;
CREATE INDEX refunds_processor_reference_idx ON refunds (processor_reference) WHERE processor_reference IS NOT NULL;
