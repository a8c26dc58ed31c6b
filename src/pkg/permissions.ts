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
  /** Held by an External model's monitor token (and by people who set monitor job statuses by hand). */
  monitorJobsStatus: "monitor_jobs_status",
  indexReadOwned: "index_read_owned",
  queryReadOwned: "query_read_owned",
} as const;

export type Permission = (typeof PERMISSIONS)[keyof typeof PERMISSIONS];

export const ALL_PERMISSIONS: Permission[] = Object.values(PERMISSIONS);
