/** The standard objects every tenant starts with (docs/STANDARD_OBJECTS.md, generated from this file), as catalogue values. */
import type { ObjectDef } from "./catalogue.ts";
import { standardObject } from "./field-factory.ts";

const JOB_STATUSES = [
  "Queued",
  "Pending Allocation",
  "Pending Dispatch",
  "Dispatched",
  "Ready",
  "En Route",
  "On Site",
  "In Progress",
  "Complete",
  "Cancelled",
];

const JOB_ALLOCATION_STATUSES = [
  "Pending Dispatch",
  "Dispatched",
  "Confirmed",
  "En Route",
  "Checked In",
  "In Progress",
  "Complete",
  "Declined",
  "Deleted",
];

const str = { type: "string" } as const;
const ref = (referenceTo: string, reverseName: string, required = false) =>
  ({ type: "reference", referenceTo, reverseName, required }) as const;

export const STANDARD_OBJECTS: readonly ObjectDef[] = [
  standardObject("Regions", "Region", {
    Name: { ...str, required: true },
    Timezone: { ...str, required: true },
    Description: { ...str, maxLength: 100 },
    CountryCode: { ...str, maxLength: 2 },
  }),
  standardObject("Accounts", "Account", {
    Name: { ...str, required: true },
    Phone: str,
    BillingStreet: str,
    BillingCity: str,
    BillingState: str,
    BillingPostalCode: str,
  }),
  standardObject("Contacts", "Contact", {
    FirstName: str,
    LastName: { ...str, required: true },
    FullName: { ...str, readOnly: true },
    Email: str,
    Phone: str,
    MobilePhone: str,
    Title: str,
    Account: ref("Accounts", "Contacts"),
    Region: ref("Regions", "Contacts"),
  }),
  standardObject("Users", "User", {
    FirstName: str,
    LastName: { ...str, required: true },
    Email: { ...str, required: true },
    IsActive: { type: "boolean", defaultValue: true },
    UserTypes: { type: "multipicklist", items: ["Administrator", "Scheduler", "Resource"] },
  }),
  standardObject("Resources", "Resource", {
    Name: { ...str, required: true },
    PrimaryRegion: ref("Regions", "Resources", true),
    User: ref("Users", "Resources"),
    Category: str,
    ResourceType: { type: "picklist", items: ["Person", "Asset"] },
    Email: str,
    MobilePhone: str,
    IsActive: { type: "boolean", defaultValue: true },
    Rating: { type: "int" },
  }),
  standardObject("Jobs", "Job", {
    Name: { ...str, readOnly: true },
    Description: str,
    JobStatus: { type: "picklist", items: JOB_STATUSES, defaultValue: "Queued" },
    Type: str,
    Urgency: str,
    Start: { type: "datetime" },
    End: { type: "datetime" },
    Duration: { type: "duration", required: true },
    Region: ref("Regions", "Jobs", true),
    Account: ref("Accounts", "Jobs"),
    Contact: ref("Contacts", "Jobs"),
    Address: str,
    Locked: { type: "boolean", defaultValue: false },
    Quantity: { type: "int" },
    JobAllocationCount: { type: "int", readOnly: true, defaultValue: 0 },
  }),
  standardObject("JobAllocations", "Job Allocation", {
    Name: { ...str, readOnly: true },
    Job: ref("Jobs", "JobAllocations", true),
    Resource: ref("Resources", "JobAllocations", true),
    Status: { type: "picklist", items: JOB_ALLOCATION_STATUSES, defaultValue: "Pending Dispatch" },
    Start: { type: "datetime" },
    End: { type: "datetime" },
    Duration: { type: "duration" },
    TeamLeader: { type: "boolean", defaultValue: false },
  }),
  standardObject("Availabilities", "Availability", {
    Resource: ref("Resources", "Availabilities", true),
    Start: { type: "datetime", required: true },
    Finish: { type: "datetime", required: true },
    IsAvailable: { type: "boolean", defaultValue: true },
    Status: { type: "picklist", items: ["Pending", "Approved", "Declined"], defaultValue: "Pending" },
    Type: { type: "picklist", items: ["Sick", "Leave", "Occupied", "Overtime", "Weekend Shift"] },
    Notes: { type: "textarea" },
  }),
];
