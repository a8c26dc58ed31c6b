CREATE TABLE `schedules` (
	`kind` text NOT NULL,
	`owner_id` text NOT NULL,
	`rule` text NOT NULL,
	`next_run_at` text,
	`lease_token` text,
	`lease_until` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_run_at` text,
	`last_run_key` text,
	`last_error` text,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`kind`, `owner_id`)
);
--> statement-breakpoint
CREATE INDEX `schedules_due_idx` ON `schedules` (`next_run_at`) WHERE "schedules"."next_run_at" IS NOT NULL;