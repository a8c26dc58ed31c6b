-- Defaults every deployment starts with. Idempotent (INSERT OR IGNORE), with fixed ids so that
-- every environment agrees on them; see docs/storage.md.
INSERT OR IGNORE INTO categories (id, name, is_default, etag, created_at, updated_at)
VALUES ('00000000-0000-4000-8000-000000000002', 'Ungrouped', 1, 'seed', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO entity_types (id, name, description, applies_to, icon_name, icon_color, is_default, etag, created_at, updated_at)
VALUES ('00000000-0000-4000-8000-000000000001', 'General', 'The default type of every entity.', NULL, 'general', '#607D8B', 1, 'seed', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO system_statuses (name, sort_order) VALUES
  ('new', 1), ('active', 2), ('inProgress', 3), ('onHold', 4), ('completed', 5), ('closed', 6), ('cancelled', 7);
