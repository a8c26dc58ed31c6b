/**
 * Data processing routes (API version 1.2): job definitions, job configs, output types, jobs, chains,
 * cancellation and job outputs.
 */
import { newApp } from "../app-factory";
import { jobConfigurationsApp } from "./config-routes";
import { outputTypesApp } from "./output-type-routes";
import { jobsApp } from "./job-routes";
import { jobOutputsApp } from "./job-output-routes";

export function dataProcessingApp() {
  const app = newApp();
  app.route("/", jobConfigurationsApp());
  app.route("/", outputTypesApp());
  app.route("/", jobsApp());
  app.route("/", jobOutputsApp());
  return app;
}
