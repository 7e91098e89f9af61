// The memory TaskStorage keeps the storage contract (its bounds, with the live layer's followers:
// test/servers/agentUnits.test.ts).
import * as TaskStorage from "../../src/services/TaskStorage.js"
import { storageContract } from "./taskStorageContract.js"

storageContract("the memory storage", () => TaskStorage.layer())
