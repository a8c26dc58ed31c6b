/** Work management (spec 2.3–2.5, section 3): one sub-app per resource, mounted together. */
import { newApp } from "../app-factory";
import { assetsApp } from "../assets/routes";
import { deviationsApp } from "../deviations/routes";
import { deviationTypesApp } from "../deviations/types/routes";
import { deviationWorkItemLinksApp } from "../deviations/work-item-links-routes";
import { templatesApp } from "../templates/routes";
import { workItemsApp } from "../work-items/routes";

import { mediaReferencesApp } from "../media-references/routes";

export function workManagementApp() {
  const app = newApp();
  app.route("/", assetsApp());
  app.route("/", deviationTypesApp());
  app.route("/", deviationsApp());
  app.route("/", deviationWorkItemLinksApp());
  app.route("/", templatesApp());
  app.route("/", workItemsApp());
  app.route("/", mediaReferencesApp());
  return app;
}
