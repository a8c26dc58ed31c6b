/** Models and monitors routes (API area monitoring, version 1.0): one file per resource, mounted in registration order. */
import { newApp } from "../app-factory";
import { modelDefinitionsApp } from "./model-definition-routes";
import { modelsApp } from "./model-routes";
import { populationsApp } from "./population-routes";
import { monitorsApp } from "./monitor-routes";
import { monitorJobsApp } from "./monitor-job-routes";

export function monitoringApp() {
  const app = newApp();
  app.route("/", modelDefinitionsApp());
  app.route("/", modelsApp());
  app.route("/", populationsApp());
  app.route("/", monitorsApp());
  app.route("/", monitorJobsApp());
  return app;
}
