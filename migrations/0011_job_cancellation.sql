ALTER TABLE `jobs` ADD `cancelled_by_id` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `cancelled_by_name` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `cancelled_at` text;--> statement-breakpoint
-- Jobs cancelled before these columns existed: the runner wrote "Cancelled by {who} at {ended_at}."
UPDATE `jobs` SET `cancelled_at` = `ended_at`, `cancelled_by_name` = substr(`error_message`, 14, length(`error_message`) - 13 - length(' at ' || `ended_at` || '.'))
  WHERE `status` = 'Failed' AND `ended_at` IS NOT NULL AND `error_message` LIKE 'Cancelled by %' AND substr(`error_message`, -length(' at ' || `ended_at` || '.')) = ' at ' || `ended_at` || '.';
