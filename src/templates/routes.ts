/** Templates (spec 2.4, section 3): work and activity templates with their revisions, activity types, tags. */
import { newApp } from "../app-factory";
import { activityTypesApp } from "./activity-types/routes";
import { activityTemplatesApp } from "./activity/routes";
import { tagsApp } from "./tags";
import { fileReferencesApp } from "../file-references/routes";
import { WORK_TEMPLATE_OWNER } from "../file-references/store";
import { workTemplatesApp } from "./work/routes";

export function templatesApp() {
  const app = newApp();
  app.route("/", activityTypesApp());
  app.route("/", workTemplatesApp());
  app.route(
    "/",
    fileReferencesApp({
      base: "/WorkTemplates",
      owner: WORK_TEMPLATE_OWNER,
      tag: "Work templates",
      listSummary: "List the file references of a work template (they belong to the template, whatever its revision)",
    }),
  );
  app.route("/", activityTemplatesApp());
  app.route("/", tagsApp());
  return app;
}
