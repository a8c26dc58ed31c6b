/** Templates (spec 2.4, section 3): work and activity templates with their revisions, activity types, tags. */
import { newApp } from "../app-factory";
import { activityTypesApp } from "./activity-types/routes";
import { activityTemplatesApp } from "./activity/routes";
import { tagsApp } from "./tags";
import { workTemplateFileReferencesApp } from "./work/file-references";
import { workTemplatesApp } from "./work/routes";

export function templatesApp() {
  const app = newApp();
  app.route("/", activityTypesApp());
  app.route("/", workTemplatesApp());
  app.route("/", workTemplateFileReferencesApp());
  app.route("/", activityTemplatesApp());
  app.route("/", tagsApp());
  return app;
}
