/** Work management (spec 2.3–2.5, section 3): one sub-app per resource, mounted together. */
import { newApp } from "../app-factory";
import { templatesApp } from "../templates/routes";
import { workItemsApp } from "../work-items/routes";

export function workManagementApp() {
  const app = newApp();
  app.route("/", templatesApp());
  app.route("/", workItemsApp());
  return app;
}
