/** The shared property model (spec 2.1, 2.2): one sub-app per resource, mounted together. */
import { newApp } from "../app-factory";
import { categoriesApp } from "./categories/routes";

export function propertiesApp() {
  const app = newApp();
  app.route("/", categoriesApp());
  return app;
}
