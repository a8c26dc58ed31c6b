CREATE TABLE `imports` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`dry_run` integer NOT NULL,
	`format` text NOT NULL,
	`file_name` text NOT NULL,
	`file_id` text,
	`source_key` text NOT NULL,
	`import_key` text NOT NULL,
	`row_key_column` text,
	`mapping` text NOT NULL,
	`total` integer,
	`processed` integer DEFAULT 0 NOT NULL,
	`created` integer DEFAULT 0 NOT NULL,
	`skipped` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`chunks` integer,
	`chunks_done` integer DEFAULT 0 NOT NULL,
	`problem` text,
	`created_by_name` text,
	`finished_at` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE INDEX `imports_created_idx` ON `imports` (`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `import_rows` (
	`import_key` text NOT NULL,
	`row_key` text NOT NULL,
	`entity_id` text NOT NULL,
	`import_id` text NOT NULL,
	`row_number` integer NOT NULL,
	PRIMARY KEY(`import_key`, `row_key`)
);
--> statement-breakpoint
CREATE INDEX `import_rows_import_idx` ON `import_rows` (`import_id`,`row_number`);--> statement-breakpoint
CREATE TABLE `import_problems` (
	`import_id` text NOT NULL,
	`row_number` integer NOT NULL,
	`cells` text NOT NULL,
	`problems` text NOT NULL,
	PRIMARY KEY(`import_id`, `row_number`),
	FOREIGN KEY (`import_id`) REFERENCES `imports`(`id`) ON UPDATE no action ON DELETE cascade
);
