-- A failing subscription's receiver gets one attempt at a time (src/subscriptions/sender.ts): the attempt
-- holds this lease while it runs; other deliveries to it wait without an attempt instead of each waiting out
-- its own timeout in front of other subscribers' deliveries.
ALTER TABLE `webhook_subscriptions` ADD `attempt_lease_until` text;
