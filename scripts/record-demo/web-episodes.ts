/**
 * The two scripted web episodes: a goal and the steps an agent would take on the Stockroom app
 * (scripts/record-demo/web-app/), each with the reasoning it writes before acting. The first
 * saves the form before filling the name in, so the recording shows the app's validation error.
 */
import type { ScriptedStep } from "./web-actions.ts";

export interface WebEpisode {
  /** File name stem: `data/demo/web/<name>__experiment_analysis.md`. */
  name: string;
  goal: string;
  /** Where the episode starts (the app's hash route). */
  start: string;
  steps: ScriptedStep[];
}

export const WEB_EPISODES: WebEpisode[] = [
  {
    name: "stockroom.add-item",
    goal: "Add a new inventory item named 'Label printer' with 3 in stock, in the Office category.",
    start: "#/items",
    steps: [
      {
        reasoning:
          "The page lists the inventory. New items are added from the main menu, and the Menu button is not expanded, so the menu is closed. I will open it.",
        action: { do: "click", target: { role: "button", name: "Menu" } },
      },
      {
        reasoning: "The menu is open and has a 'New item' entry. I will choose it to get the form.",
        action: { do: "click", target: { role: "menuitem", name: "New item" } },
      },
      {
        reasoning: "The New item form has Name, Quantity and Category fields. I will set the quantity to 3 first.",
        action: { do: "fill", target: { role: "spinbutton", name: "Quantity" }, text: "3" },
      },
      {
        reasoning: "The quantity is 3. The category is a combobox set to Cables; it has to be Office.",
        action: { do: "select_option", target: { role: "combobox", name: "Category" }, option: "Office" },
      },
      {
        reasoning: "Quantity and category are set. I will save the form.",
        action: { do: "click", target: { role: "button", name: "Save" } },
      },
      {
        reasoning:
          "The form was not saved: an alert says 'Name is required.' and the Name textbox has focus. I forgot the name; I will fill it in.",
        action: { do: "fill", target: { role: "textbox", name: "Name" }, text: "Label printer" },
      },
      {
        reasoning: "Name, quantity and category are all filled in now. I will save again.",
        action: { do: "click", target: { role: "button", name: "Save" } },
      },
      {
        reasoning:
          "The inventory list is back with the status 'Saved Label printer.' and a Label printer row: Office, 3 in stock. The task is done; I will tell the user.",
        action: { do: "send_msg_to_user", text: "Added 'Label printer' (Office, 3 in stock)." },
      },
    ],
  },
  {
    name: "stockroom.delete-item",
    goal: "Delete the item 'Broken stapler' from the inventory.",
    start: "#/items",
    steps: [
      {
        reasoning: "The inventory has a search box. I will type the item's name into it to find the item.",
        action: { do: "fill", target: { role: "searchbox", name: "Search items" }, text: "stapler" },
      },
      {
        reasoning: "The search box holds 'stapler' but the list still shows all items. I will press Enter to search.",
        action: { do: "press", target: { role: "searchbox", name: "Search items" }, key: "Enter" },
      },
      {
        reasoning: "One item matches: the link 'Broken stapler'. I will open it.",
        action: { do: "click", target: { role: "link", name: "Broken stapler" } },
      },
      {
        reasoning: "This is the Broken stapler's page, with a 'Delete item' button.",
        action: { do: "click", target: { role: "button", name: "Delete item" } },
      },
      {
        reasoning: "A dialog asks 'Delete Broken stapler?'. I will confirm with its Delete button.",
        action: { do: "click", target: { role: "button", name: "Delete" } },
      },
      {
        reasoning: "The status says 'Deleted Broken stapler.' and no item matches 'stapler' any more. I will report back.",
        action: { do: "send_msg_to_user", text: "Deleted 'Broken stapler'; no item matches 'stapler' any more." },
      },
    ],
  },
];
