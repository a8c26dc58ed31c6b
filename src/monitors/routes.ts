/**
 * Models and monitors routes (API area monitoring, version 1.0): one folder per resource (routes,
 * schema, store, list), mounted here in the order the OpenAPI document lists them.
 */
import { newApp } from "../app-factory";
import { modelDefinitionsApp } from "./model-definitions/routes";
import { modelsApp } from "./models/routes";
import { populationsApp } from "./populations/routes";
import { monitorsApp } from "./monitors/routes";
import { monitorJobsApp } from "./monitor-jobs/routes";
import { alarmsApp } from "./alarms/routes";

export function monitoringApp() {
  const app = newApp();
  app.route("/", modelDefinitionsApp());
  app.route("/", modelsApp());
  app.route("/", populationsApp());
  app.route("/", monitorsApp());
  app.route("/", monitorJobsApp());
  app.route("/", alarmsApp());
  return app;
}
