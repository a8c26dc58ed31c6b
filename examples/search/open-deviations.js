// A custom index of the open deviations, with their plant and equipment (README, "Search").
import { IndexBuilder } from "integrity-edge/search";

export default class OpenDeviations extends IndexBuilder {
  mapping() {
    return {
      referenceId: { type: "keyword", displayName: "Reference", alwaysShow: true },
      description: { type: "text", displayName: "Description", alwaysShow: true },
      plant: { type: "keyword", displayName: "Plant", alwaysShow: true },
      equipment: { type: "keyword", displayName: "Equipment" },
      owner: { type: "keyword", displayName: "Owner", isIdentity: true },
      createdAt: { type: "date", displayName: "Created" },
    };
  }

  async *entries() {
    // Page through the platform's own list, with the same query parameters as GET /Deviations.
    for (let skip = 0; ; skip += 500) {
      const page = await this.services.deviations.list({ statuses: "new,active", skip, take: 500 });
      this.logger.info(`read ${page.length} open deviations from ${skip}`);
      for (const d of page) {
        yield {
          id: d.id,
          referenceId: d.referenceId,
          description: d.description,
          plant: d.assetReference.plant?.name ?? null,
          equipment: d.assetReference.equipment?.name ?? null,
          owner: d.objectOwner.name,
          createdAt: d.createdAt,
        };
      }
      if (page.length < 500) return;
    }
  }
}
