/**
 * Every permission a route can require. Tokens carry them in the `permissions` claim (an array) or
 * the OAuth `scope` claim (space-separated). Routes name exactly one; `npm run token` without flags
 * grants all of them.
 */
export const PERMISSIONS = {
  propertiesRead: "properties_read",
  propertiesWrite: "properties_write",
  mediaRead: "media_read",
  mediaWrite: "media_write",
  filesRead: "files_read",
  filesWrite: "files_write",
  dataTypesWrite: "data_types_write",
  workRead: "work_read",
  workWrite: "work_write",
  assetsRead: "assets_read",
  assetsWrite: "assets_write",
  dataProcessingRead: "dataprocessing_read",
  dataProcessingWrite: "dataprocessing_write",
  /** Held only by a job's own output token (and by people who post outputs by hand). */
  jobOutputsWrite: "job_outputs_write",
  monitorsRead: "monitors_read",
  monitorsWrite: "monitors_write",
  /**
   * Work alarms (issue 33): acknowledge, assign, unassign, comment, shelve and unshelve them. Reading them
   * takes monitors_read (channels' read rights too, once they exist).
   */
  alarmsWrite: "alarms_write",
  /** Held by an External model's monitor token (and by people who set monitor job statuses by hand). */
  monitorJobsStatus: "monitor_jobs_status",
  /**
   * Read the assets a monitor job scores (GET /MonitorJobs/{id}/PopulationAssetIds). Held by the job's
   * model: its job token (ACR models, for that monitor job only) and the monitor's status token
   * (External models, for that monitor's jobs only); and by people who read them by hand.
   */
  monitorJobAssetsRead: "monitor_job_assets_read",
  /** Search (docs/decisions.md, "Search permissions"): standard indices and your own custom ones, searched. */
  indexReadOwned: "index_read_owned",
  /** Also every other user's custom indices. */
  indexReadAll: "index_read_all",
  /** Create custom indices; change, resynchronise and delete the ones you own. */
  indexWrite: "index_write",
  /** Change, resynchronise and delete any index, standard ones included. */
  indexAdmin: "index_admin",
  /** Your own saved queries (executing one also needs index_read_owned). */
  queryReadOwned: "query_read_owned",
  /** Also every other user's saved queries. */
  queryReadAll: "query_read_all",
  /** Create saved queries; change and delete the ones you own. */
  queryWrite: "query_write",
  /** Channels, their readings, analyses and charts, and the catalogues (channel types, data origins, availabilities). */
  measurementsRead: "measurements_read",
  /** Create, change and delete channels and the catalogues' own entries. */
  measurementsWrite: "measurements_write",
  /** Record and void readings (signals). */
  readingsWrite: "readings_write",
  /** Read the directory of users (GET /Users, /Users/{id}, /Users/me): who has called the API. */
  usersRead: "users_read",
  /** Read webhook subscriptions and their deliveries (never a subscription's secret). */
  subscriptionsRead: "subscriptions_read",
  /** Create, change, delete webhook subscriptions, rotate their secrets and redeliver deliveries. */
  subscriptionsWrite: "subscriptions_write",
  /**
   * Read the audit trail (GET /AuditTrail, its export and verification, GET /{Resource}/{id}/History): only of
   * the kinds the caller may also read.
   */
  auditRead: "audit_read",
} as const;

export type Permission = (typeof PERMISSIONS)[keyof typeof PERMISSIONS];

export const ALL_PERMISSIONS: Permission[] = Object.values(PERMISSIONS);
