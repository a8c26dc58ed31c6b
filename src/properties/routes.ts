/** The shared property model (spec 2.1, 2.2): one sub-app per resource, mounted together. */
import { newApp } from "../app-factory";
import { categoriesApp } from "./categories/routes";
import { classificationsApp } from "./classifications/routes";
import { propertyDefinitionsApp } from "./definitions/routes";
import { propertyDryRunApp } from "./dry-run/routes";
import { entityTypesApp } from "./entity-types/routes";
import { userStatusesApp } from "./user-statuses/routes";

export function propertiesApp() {
  const app = newApp();
  app.route("/", categoriesApp());
  app.route("/", classificationsApp());
  app.route("/", propertyDryRunApp());
  app.route("/", propertyDefinitionsApp());
  app.route("/", entityTypesApp());
  app.route("/", userStatusesApp());
  return app;
}
