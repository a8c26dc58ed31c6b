/**
 * Measurements (issue 35, API area signals 1.2): the original Signals service's channels, catalogues
 * and signals, with series in Durable Objects, the thickness analysis, charts and channel controllers.
 */
import { newApp } from "../app-factory";
import { catalogueApp } from "./catalogue/routes";
import { channelsApp } from "./channels/routes";
import { feedApp } from "./feed/routes";
import { readingsApp } from "./readings/routes";

export function measurementsApp() {
  const app = newApp();
  app.route("/", catalogueApp());
  app.route("/", channelsApp());
  app.route("/", readingsApp());
  app.route("/", feedApp());
  return app;
}
