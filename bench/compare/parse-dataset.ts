/**
 * The dataset in Parse's shape: class definitions for its schema API, and rows
 * in the storage format of its PostgreSQL adapter (objectId primary key,
 * createdAt/updatedAt, a pointer as the target's objectId, no ACL = public,
 * a relation as rows of `_Join:<field>:<class>`). objectIds are a class letter
 * and the dataset index, zero-padded to Parse's 10 characters, so key order is
 * dataset order as in the other systems.
 */
import {
  accountRow,
  allAllocations,
  allocationRows,
  contactRow,
  indexes,
  jobRow,
  regionRow,
  resourceRow,
  SIZES,
} from "./dataset.ts";

const string = { type: "String" };
const number = { type: "Number" };
const required = (field: object) => ({ ...field, required: true });
const pointer = (targetClass: string) => ({ type: "Pointer", targetClass });

/** Created in this order through POST /parse/schemas/<class>. */
export const PARSE_CLASSES: Record<string, Record<string, object>> = {
  Region: { name: required(string), timezone: required(string), description: string, countryCode: string },
  Account: {
    name: required(string),
    externalId: string,
    phone: string,
    billingStreet: string,
    billingCity: string,
  },
  Contact: {
    firstName: string,
    lastName: required(string),
    fullName: string,
    email: string,
    title: string,
    account: pointer("Account"),
    region: pointer("Region"),
  },
  Resource: {
    name: required(string),
    primaryRegion: required(pointer("Region")),
    category: string,
    resourceType: string,
    rating: number,
    isActive: { type: "Boolean", defaultValue: true },
  },
  JobAllocation: {
    name: string,
    job: required(pointer("Job")),
    resource: required(pointer("Resource")),
    status: { type: "String", defaultValue: "Pending Dispatch" },
    teamLeader: { type: "Boolean", defaultValue: false },
  },
  Job: {
    name: string,
    description: string,
    jobStatus: { type: "String", defaultValue: "Queued" },
    urgency: string,
    start: { type: "Date" },
    end: { type: "Date" },
    duration: required(number),
    region: required(pointer("Region")),
    account: pointer("Account"),
    contact: pointer("Contact"),
    locked: { type: "Boolean", defaultValue: false },
    jobAllocationCount: number,
    allocations: { type: "Relation", targetClass: "JobAllocation" },
  },
};

/** An index per pointer and on the relation's owning side (as our store indexes references), and the upsert key. */
export const PARSE_INDEXES = [
  'CREATE UNIQUE INDEX ON "Account" ("externalId")',
  'CREATE INDEX ON "Contact" ("account")',
  'CREATE INDEX ON "Contact" ("region")',
  'CREATE INDEX ON "Resource" ("primaryRegion")',
  'CREATE INDEX ON "Job" ("region")',
  'CREATE INDEX ON "Job" ("account")',
  'CREATE INDEX ON "Job" ("contact")',
  'CREATE INDEX ON "JobAllocation" ("job")',
  'CREATE INDEX ON "JobAllocation" ("resource")',
  'CREATE INDEX ON "_Join:allocations:Job" ("owningId")',
];

const objectId = (letter: string, index: number) => `${letter}${String(index).padStart(9, "0")}`;
const numbered = (prefix: string, n: number) => `${prefix}${String(n).padStart(4, "0")}`;

/** The rows of every table, referenced tables first. */
export function parseRows(): [string, Record<string, unknown>[]][] {
  const now = new Date().toISOString();
  const stamp = (letter: string, i: number) => ({
    objectId: objectId(letter, i),
    createdAt: now,
    updatedAt: now,
  });
  const allocations = allAllocations();
  return [
    ["Region", indexes(SIZES.regions).map((i) => ({ ...stamp("R", i), ...regionRow(i) }))],
    ["Account", indexes(SIZES.accounts).map((i) => ({ ...stamp("A", i), ...accountRow(i) }))],
    [
      "Contact",
      indexes(SIZES.contacts).map((i) => {
        const c = contactRow(i);
        return {
          ...stamp("C", i),
          ...c,
          fullName: `${c.firstName} ${c.lastName}`,
          account: objectId("A", c.account),
          region: objectId("R", c.region),
        };
      }),
    ],
    [
      "Resource",
      indexes(SIZES.resources).map((i) => {
        const r = resourceRow(i);
        return { ...stamp("V", i), ...r, primaryRegion: objectId("R", r.primaryRegion), isActive: true };
      }),
    ],
    ["Job", indexes(SIZES.jobs).map((i) => jobValues(stamp("J", i), i))],
    [
      "JobAllocation",
      allocations.map((a, i) => ({
        ...stamp("L", i),
        name: numbered("JA-", i + 1),
        job: objectId("J", a.job),
        resource: objectId("V", a.resource),
        status: a.status,
        teamLeader: a.teamLeader,
      })),
    ],
    [
      "_Join:allocations:Job",
      allocations.map((a, i) => ({ relatedId: objectId("L", i), owningId: objectId("J", a.job) })),
    ],
  ];
}

function jobValues(stamp: object, i: number): Record<string, unknown> {
  const j = jobRow(i);
  return {
    ...stamp,
    name: numbered("JOB-", i + 1),
    description: j.description,
    jobStatus: j.jobStatus,
    urgency: j.urgency,
    start: j.start,
    end: j.end,
    duration: j.duration,
    region: objectId("R", j.region),
    account: objectId("A", j.account),
    contact: j.contact === null ? null : objectId("C", j.contact),
    locked: false,
    jobAllocationCount: allocationRows(i).length,
  };
}
