/** Work management (spec 2.3–2.5, section 3): one sub-app per resource, mounted together. */
import { newApp } from "../app-factory";

export function workManagementApp() {
  const app = newApp();
  return app;
}
