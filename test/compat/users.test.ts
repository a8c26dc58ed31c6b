/**
 * Issue 21 §4: the original client's file upload, byte for byte as ZEVIT-AIH-SDK 0.5.13 sends it.
 * `AIHClient._upload_file` first finds the owner with the identity service's
 * `User().get(parameters=[('keyword', client_id)])` (`GET /Users?keyword={clientId}`, header
 * `api-version: 1.0`), takes `get_value('id', -1)` (the id of the LAST user of the answer), and posts
 * it as `ObjectOwnerId` in a multipart `POST /Files` (fields Id (empty), DataTypeId, ObjectOwnerId,
 * File with the type `image/{extension}`; no api-version header). Its token comes from
 * `/connect/token` (client credentials, requests-oauthlib: HTTP Basic, grant_type in the form).
 */
import { exports } from "cloudflare:workers";
import { expect, it } from "vitest";
import { createDataType } from "../support/factories/upload";

const CLIENT_ID = "uploader";
const CLIENT_SECRET = "uploader-s3cret";

async function fetchToken(): Promise<string> {
  const res = await exports.default.fetch(
    new Request("https://api.test/connect/token", {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
        authorization: `Basic ${btoa(`${CLIENT_ID}:${CLIENT_SECRET}`)}`,
      },
      body: "grant_type=client_credentials",
    }),
  );
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** What urllib3's encode_multipart_formdata writes for requests' `files=` dict. */
function requestsMultipart(fields: [string, string | { filename: string; content: string; type: string }][]): {
  body: Uint8Array;
  contentType: string;
} {
  const boundary = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
  let text = "";
  for (const [name, value] of fields) {
    text += `--${boundary}\r\n`;
    if (typeof value === "string") text += `Content-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    else
      text +=
        `Content-Disposition: form-data; name="${name}"; filename="${value.filename}"\r\nContent-Type: ` +
        `${value.type}\r\n\r\n${value.content}\r\n`;
  }
  text += `--${boundary}--\r\n`;
  return { body: new TextEncoder().encode(text), contentType: `multipart/form-data; boundary=${boundary}` };
}

it("finds its own user with GET /Users?keyword={clientId} on its first call, and uploads a file owned by that user", async () => {
  const dataType = await createDataType({ allowedExtensions: ["csv"] });
  const token = await fetchToken();
  const auth = {
    authorization: `Bearer ${token}`,
    "user-agent": "python-requests/2.31.0",
    "accept-encoding": "gzip, deflate",
    accept: "*/*",
    connection: "keep-alive",
  };

  // user = User().get(parameters=[('keyword', self.client_id)])
  const users = await exports.default.fetch(
    new Request(`https://api.test/Users?keyword=${CLIENT_ID}`, { headers: { ...auth, "api-version": "1.0" } }),
  );
  expect(users.status).toBe(200);
  const list = (await users.json()) as { id: string; name: string }[];
  expect(Array.isArray(list)).toBe(true);
  // user.get_value('id', -1)
  const ownerId = list.at(-1)!.id;
  expect(ownerId).toBe(`client:${CLIENT_ID}`);

  // self.client.post(url=.../Files, files={Id: (None, ''), DataTypeId, ObjectOwnerId, File: (name, file, f'image/{ext}')})
  const { body, contentType } = requestsMultipart([
    ["Id", ""],
    ["DataTypeId", dataType.id],
    ["ObjectOwnerId", ownerId],
    ["File", { filename: "scores.csv", content: "asset,score\nP-1,71\n", type: "image/csv" }],
  ]);
  const posted = await exports.default.fetch(
    new Request("https://api.test/Files", {
      method: "POST",
      headers: { ...auth, "content-type": contentType, "content-length": String(body.byteLength) },
      body,
    }),
  );
  const file = (await posted.json()) as { id: string; objectOwner: { id: string; name: string | null } };
  expect(posted.status, JSON.stringify(file)).toBe(201);
  expect(file.id).toMatch(/^[0-9a-f-]{36}$/);
  expect(file.objectOwner.id).toBe(`client:${CLIENT_ID}`);
  const read = await exports.default.fetch(new Request(`https://api.test/Files/${file.id}`, { headers: auth }));
  expect(((await read.json()) as { objectOwner: { id: string } }).objectOwner.id).toBe(`client:${CLIENT_ID}`);
});
