/**
 * Search routes (API area search, versions 1.0 and 1.1; spec 2.10, 4.2 rules 9 to 11, 9.2). Version
 * 1.0 knows the standard indices; 1.1 adds custom ones. Indices and saved queries are D1 rows listed by
 * the shared query engine; documents and searches are in each index's SearchIndex Durable Object.
 */
import { newApp } from "../app-factory";
import { indicesApp } from "./index-routes";
import { indexSyncApp } from "./index-sync-routes";
import { queriesApp } from "./query-routes";

export function searchApp() {
  const app = newApp();
  app.route("/", indicesApp());
  app.route("/", indexSyncApp());
  app.route("/", queriesApp());
  return app;
}
