// A custom index of equipment with the number of deviations on each (README, "Search").
import { IndexBuilder } from "integrity-edge/search";

export default class EquipmentDeviations extends IndexBuilder {
  mapping() {
    return {
      name: { type: "text", displayName: "Equipment", alwaysShow: true },
      deviations: { type: "number", displayName: "Deviations", alwaysShow: true },
      references: { type: "keyword", displayName: "Deviation references" },
    };
  }

  async *entries() {
    // Ask for both lists at once: the answers arrive together.
    const [equipment, deviations] = await Promise.all([
      this.services.assets.list({ kinds: "equipment", take: 1000 }),
      this.services.get("deviations").list({ take: 1000 }),
    ]);
    const references = new Map();
    for (const d of deviations) {
      const id = d.assetReference.equipment?.id;
      if (id) references.set(id, [...(references.get(id) ?? []), d.referenceId]);
    }
    this.logger.info("equipment:", equipment.length, "deviations:", deviations.length);
    for (const e of equipment) {
      const refs = references.get(e.id) ?? [];
      yield { id: e.id, name: e.name, deviations: refs.length, references: refs };
    }
  }
}
