CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`subscription_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`entity_kind` text NOT NULL,
	`entity_id` text NOT NULL,
	`occurred_at` text NOT NULL,
	`payload` text NOT NULL,
	`truncated` integer NOT NULL,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`round` integer NOT NULL,
	`round_attempts` integer NOT NULL,
	`next_attempt_at` text,
	`last_attempt_at` text,
	`last_status_code` integer,
	`last_response_excerpt` text,
	`last_error` text,
	`delivered_at` text,
	`enqueued_at` text,
	`lease_until` text,
	`redelivered_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`subscription_id`) REFERENCES `webhook_subscriptions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_event_uq` ON `webhook_deliveries` (`subscription_id`,`event_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_subscription_idx` ON `webhook_deliveries` (`subscription_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_event_idx` ON `webhook_deliveries` (`event_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_created_idx` ON `webhook_deliveries` (`created_at`);--> statement-breakpoint
CREATE TABLE `webhook_subscription_filters` (
	`subscription_id` text NOT NULL,
	`entity_kind` text NOT NULL,
	`action` text NOT NULL,
	PRIMARY KEY(`subscription_id`, `entity_kind`, `action`),
	FOREIGN KEY (`subscription_id`) REFERENCES `webhook_subscriptions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_subscription_filters_match_idx` ON `webhook_subscription_filters` (`entity_kind`,`action`);--> statement-breakpoint
CREATE TABLE `webhook_subscriptions` (
	`id` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`description` text,
	`filters` text NOT NULL,
	`enabled` integer NOT NULL,
	`disabled_reason` text,
	`disabled_at` text,
	`secret_sealed` text NOT NULL,
	`secret_rotated_at` text NOT NULL,
	`failing_since` text,
	`last_success_at` text,
	`last_failure_at` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE INDEX `webhook_subscriptions_created_idx` ON `webhook_subscriptions` (`created_at`,`id`);