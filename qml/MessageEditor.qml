// Editing a user message: the text, "Send as a new branch" (Enter) and Cancel (Esc). Sending
// never overwrites: the edit becomes a sibling of the original.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

ColumnLayout {
    id: root
    objectName: "messageEditor"
    property string initialText
    signal accepted(string text)
    signal cancelled()

    Component.onCompleted: {
        editArea.text = root.initialText
        editArea.forceActiveFocus()
        editArea.cursorPosition = editArea.length
    }

    TextArea {
        id: editArea
        objectName: "editInput"
        Layout.fillWidth: true
        wrapMode: TextEdit.Wrap
        selectByMouse: true
        Accessible.name: qsTr("Edited message")
        Keys.onPressed: (event) => {
            if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter) && !(event.modifiers & Qt.ShiftModifier)) {
                if (saveButton.enabled)
                    root.accepted(editArea.text)
                event.accepted = true
            } else if (event.key === Qt.Key_Escape) {
                root.cancelled()
                event.accepted = true
            }
        }
    }
    RowLayout {
        Button {
            id: saveButton
            objectName: "editSave"
            text: qsTr("Send as a new branch")
            highlighted: true
            enabled: editArea.text.trim().length > 0 && !ChatController.generating
            Accessible.name: qsTr("Send the edited message as a new branch")
            onClicked: root.accepted(editArea.text)
        }
        Button {
            objectName: "editCancel"
            text: qsTr("Cancel")
            Accessible.name: qsTr("Cancel editing")
            onClicked: root.cancelled()
        }
    }
}
