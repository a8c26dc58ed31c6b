/** Data upload (spec 2.9): data types, files, and resumable uploads, mounted together. */
import { newApp } from "../app-factory";
import { dataTypesApp } from "./data-types/routes";
import { filesApp } from "./files/routes";
import { uploadsApp } from "./uploads/routes";

export function uploadApp() {
  const app = newApp();
  app.route("/", dataTypesApp());
  // Before the files routes, so /Files/Uploads/... is never read as a file id.
  app.route("/", uploadsApp());
  app.route("/", filesApp());
  return app;
}
